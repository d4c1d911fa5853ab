import FoundationEssentials
import InklingCore

/// Small, hand-written language packs for tests, built in memory with the real `PackBuilder`.
///
/// The English fixture has about 160 words with plausible (wordfreq-like) frequencies, a few
/// surface forms (names, `I`) and a corpus of about 60 sentences, so that bigrams, trigrams
/// and the character model all carry real signal while the build stays in the milliseconds.
public enum FixturePacks {
    /// The bytes of the English fixture pack (built once per test process).
    public static let englishBytes: [UInt8] = PackBuilder(inputs: englishInputs, parameters: englishParameters).build()

    /// The English fixture pack, opened from `englishBytes`.
    public static let english: LanguagePack = {
        do {
            return try LanguagePack(data: Data(englishBytes))
        } catch {
            fatalError("the English fixture pack does not open: \(error)")
        }
    }()

    /// The builder inputs of the English fixture (for tests that build variants of it).
    public static var englishInputs: PackBuilder.Inputs {
        var inputs = PackBuilder.Inputs(wordFrequencies: EnglishFixture.wordFrequencies, corpus: EnglishFixture.corpus)
        inputs.surfaceForms = EnglishFixture.surfaceForms
        inputs.bigrams = EnglishFixture.bigrams
        inputs.spellings = EnglishFixture.spellings
        return inputs
    }

    /// The builder parameters of the English fixture: a small character table keeps it fast.
    public static var englishParameters: PackBuilder.Parameters {
        var parameters = PackBuilder.Parameters()
        parameters.language = "en"
        parameters.displayName = "English (test fixture)"
        parameters.version = "fixture-1"
        parameters.characterTableBytes = 1 << 16
        return parameters
    }

    /// The section tags `PackBuilder` writes, in the order it writes them.
    public static let sectionTags = [
        "VKEY", "VKOF", "VDSP", "VDOF", "VPRI", "VFLG", "VTOP",
        "BGOF", "BGSU", "BGWT", "TGKY", "TGOF", "TGSU", "TGWT",
        "CMAL", "CMOR", "CMHT", "META",
    ]

    /// Builds a pack from a word list and corpus with a tiny character table (a few ms).
    public static func build(
        wordFrequencies: String, corpus: String, surfaceForms: String = "",
        configure: (inout PackBuilder.Parameters) -> Void = { _ in }
    ) -> [UInt8] {
        var inputs = PackBuilder.Inputs(wordFrequencies: wordFrequencies, corpus: corpus)
        inputs.surfaceForms = surfaceForms
        var parameters = PackBuilder.Parameters()
        parameters.characterTableBytes = 1 << 13
        configure(&parameters)
        return PackBuilder(inputs: inputs, parameters: parameters).build()
    }

    /// Writes bytes to a new file in the temporary directory and returns its path.
    ///
    /// The caller removes it with `removeTemporaryFile(_:)` when done.
    public static func writeTemporaryFile(_ bytes: [UInt8], name: String = "pack.inkpack") throws -> String {
        let url = FileManager.default.temporaryDirectory
            .appending(path: "inkling-test-\(UUID().uuidString)-\(name)")
        try Data(bytes).write(to: url)
        return url.path
    }

    /// Removes a file written by `writeTemporaryFile(_:name:)` (errors are ignored).
    public static func removeTemporaryFile(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The committed English pack, `data/packs/en.inkpack`, found from a source file's path.
    ///
    /// Pass `#filePath` from a test; returns nil when the checkout has no pack.
    public static func committedEnglishPackPath(from filePath: String = #filePath) -> String? {
        var directory = URL(filePath: filePath).deletingLastPathComponent()
        for _ in 0..<8 {
            let candidate = directory.appending(path: "data/packs/en.inkpack").path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }
}

/// The hand-written English fixture data.
public enum EnglishFixture {
    /// `word<TAB>frequency`, most frequent first. Includes entries the builder must reject
    /// (numbers, two words, underscores, bad frequencies).
    public static let wordFrequencies = """
        the\t0.0500
        of\t0.0280
        and\t0.0260
        to\t0.0250
        a\t0.0210
        in\t0.0170
        is\t0.0100
        i\t0.0098
        that\t0.0095
        it\t0.0093
        for\t0.0085
        you\t0.0083
        was\t0.0070
        on\t0.0066
        with\t0.0064
        he\t0.0058
        this\t0.0055
        as\t0.0054
        be\t0.0050
        at\t0.0047
        have\t0.0046
        by\t0.0045
        not\t0.0043
        are\t0.0042
        but\t0.0041
        from\t0.0040
        they\t0.0038
        we\t0.0036
        or\t0.0034
        an\t0.0031
        his\t0.0030
        she\t0.0029
        will\t0.0028
        my\t0.0027
        all\t0.0026
        there\t0.0025
        one\t0.0024
        so\t0.0023
        had\t0.0022
        their\t0.0022
        what\t0.0021
        can\t0.0020
        if\t0.0019
        were\t0.0018
        about\t0.0018
        would\t0.0017
        which\t0.0017
        them\t0.0016
        then\t0.0015
        has\t0.0015
        when\t0.00145
        been\t0.0014
        her\t0.00135
        who\t0.0013
        out\t0.00125
        up\t0.0012
        do\t0.0012
        more\t0.00115
        no\t0.0011
        some\t0.00105
        time\t0.0010
        like\t0.00095
        just\t0.0009
        me\t0.0009
        these\t0.00088
        into\t0.00085
        than\t0.0008
        other\t0.00078
        people\t0.00075
        new\t0.0007
        here\t0.0007
        him\t0.0007
        could\t0.00068
        said\t0.00066
        first\t0.00064
        two\t0.0006
        how\t0.0006
        your\t0.0006
        also\t0.00058
        year\t0.00055
        well\t0.00053
        it's\t0.0005
        our\t0.0005
        did\t0.0005
        don't\t0.00048
        i'm\t0.00046
        very\t0.00044
        good\t0.00042
        see\t0.0004
        know\t0.00039
        get\t0.00038
        make\t0.00037
        think\t0.00036
        where\t0.00035
        over\t0.00034
        those\t0.00033
        day\t0.00032
        through\t0.00031
        does\t0.0003
        world\t0.0003
        back\t0.00029
        after\t0.00028
        way\t0.00027
        because\t0.00026
        thing\t0.00025
        states\t0.00024
        united\t0.00022
        president\t0.0002
        help\t0.0002
        money\t0.0002
        2020\t0.0002
        house\t0.00019
        white\t0.00018
        certain\t0.00017
        didn't\t0.00015
        dollars\t0.00015
        today\t0.00015
        can't\t0.00014
        century\t0.00014
        center\t0.00012
        car\t0.00012
        thanks\t0.00012
        city\t0.00011
        country\t0.0001
        cat\t0.0001
        thank\t0.0001
        doesn't\t0.0001
        meet\t0.0001
        morning\t0.0001
        care\t0.00009
        trump\t0.00009
        obama\t0.00008
        met\t0.00008
        career\t0.00008
        they're\t0.00007
        cost\t0.00007
        clinton\t0.00006
        careful\t0.00006
        therefore\t0.00006
        yesterday\t0.00006
        theory\t0.00005
        donald\t0.00005
        coffee\t0.00005
        paid\t0.00005
        cats\t0.00004
        costs\t0.00004
        hello\t0.00004
        the\t0.00004
        The\t0.9
        cents\t0.00003
        cart\t0.00003
        hillary\t0.00003
        barack\t0.00003
        e-mail\t0.00003
        при\t0.00003
        про\t0.00002
        well-known\t0.00002
        o'clock\t0.00002
        thesis\t0.00001
        carton\t0.00001
        café\t0.00001
        привет\t0.00001
        пример\t0.00001
        правда\t0.00001
        mp3\t0.00001
        thermal\t0.000008
        naive\t0.000008
        право\t0.000008
        naïve\t0.000005
        résumé\t0.000004
        cafés\t0.000003
        rock'n'roll\t0.000002
        new york\t0.001
        __init__\t0.001
        -\t0.001
        bad\tnot-a-number
        worse\t-1
        zero\t0
        lonely
        """

    /// `form<TAB>count`: how words are capitalised in running text.
    public static let surfaceForms = """
        Obama\t900
        obama\t2
        Clinton\t700
        Hillary\t300
        Barack\t200
        Donald\t150
        donald\t10
        Trump\t400
        trump\t80
        I\t5000
        I'm\t900
        White\t120
        white\t500
        House\t200
        house\t600
        States\t300
        states\t200
        United\t250
        united\t150
        President\t100
        president\t400
        The\t5000
        the\t30000
        """

    /// Extra bigram counts (as from a larger corpus).
    public static let bigrams = """
        thank\tyou\t50
        white\thouse\t40
        united\tstates\t60
        i\tdon't\t30
        unknownword\tthe\t100
        """

    /// A few hunspell-style spellings.
    public static let spellings = """
        the
        cat
        car
        Obama
        Clinton
        """

    /// Running text, one document per line.
    public static let corpus = """
        The president of the United States spoke at the White House today.
        President Obama met Hillary Clinton at the White House.
        Barack Obama was the president of the United States for eight years.
        I don't know what they said about the president.
        I don't think that is a good idea. I don't know.
        You and I will meet them at the café tomorrow morning.
        She said that you and I should go there first.
        It is a well-known fact that the cat likes the car.
        The well-known writer was very careful with the money.
        I paid 12 cents for a cup of coffee.
        It costs 40 cents at the café near the house.
        The stamp was 25 cents in the last century.
        He found 5 cents on the floor of the car.
        They want 99 cents for the cart.
        We saved 30 cents on every carton of milk.
        The book costs 20 dollars.
        I paid 15 dollars for the cart.
        It was 50 dollars at the café.
        He owes me 10 dollars.
        We spent 60 dollars on coffee and cake.
        I am certain that the center of the city is over there.
        There is a cat in the cart and a cat on the car.
        Then they went back to the house.
        This is the way the world works.
        That is what I think about it.
        Thank you for the coffee this morning.
        Thanks for the help yesterday.
        I'm not sure that they're right about the theory.
        It's a good day for a walk in the city.
        Hillary Clinton and Donald Trump were in the news today.
        Donald Trump said that the United States will win.
        The people of the United States have a new president.
        I can't see the car from here.
        He didn't know where the cat was.
        We think that this is the first time.
        There are two cats in the house.
        My car is in the center of the city.
        When will you be back from the country?
        The city was very quiet that morning.
        You know that I like the café on the corner.
        I think that you and I can do it.
        I don't want to be naïve about it.
        His résumé was very good.
        Привет, как дела?
        Это хороший пример.
        Правда ли это? Правда.
        Привет, мир, это пример.
        Hello, how are you today?
        Hello there, it is good to see you.
        Her thesis was about thermal energy, and therefore about the world.
        The cat sat on the car in the morning.
        Be careful with the cart.
        The president will visit the White House on Monday.
        It was the best of times and the worst of times.
        People say that time is money.
        I met him at the café yesterday.
        They said that the new president had a plan.
        What do you think about the new car?
        Who was the first president of the United States?
        It's my first day in the new city.
        You can't go there without me.
        Some people like cats, and some people like dogs.
        I'd like to thank you and your family.
        The e-mail came at five o'clock.
        We met at the White House in the morning.
        """
}
