import FoundationEssentials

/// Short, plain reasons for file errors, for messages of the form "cannot read FILE: REASON".
///
/// Foundation's errors print as a structure dump (`CocoaError(code: …, userInfo: [...])`); a
/// person needs "permission denied" or "it is a folder, not a file".
public enum FileProblem {
    /// Why reading or writing a file failed, in a few words.
    public static func reason(_ error: any Error) -> String {
        if let error = error as? CocoaError {
            if let posix = error.underlying as? POSIXError { return reason(posixCode: posix.code.rawValue) }
            switch error.code {
            case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file"
            case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
            case .fileReadTooLarge: return "the file is too large"
            case .fileReadInvalidFileName, .fileWriteInvalidFileName: return "the file name is invalid"
            case .fileReadCorruptFile: return "the file is damaged"
            case .fileWriteOutOfSpace: return "the disk is full"
            case .fileWriteVolumeReadOnly: return "the file system is read-only"
            case .fileWriteFileExists: return "a file of that name already exists"
            default: return (512..<1024).contains(error.code.rawValue) ? "it cannot be written" : "it cannot be read"
            }
        }
        if let posix = error as? POSIXError { return reason(posixCode: posix.code.rawValue) }
        if let described = error as? CustomStringConvertible { return described.description }
        return "it cannot be used"
    }

    /// A reason for an `errno` value (Linux numbering), in a few words.
    public static func reason(posixCode code: Int32) -> String {
        switch code {
        case 1, 13: return "permission denied"  // EPERM, EACCES
        case 2: return "no such file"  // ENOENT
        case 5: return "input/output error (a failing disk?)"  // EIO
        case 20: return "a part of its path is not a folder"  // ENOTDIR
        case 21: return "it is a folder, not a file"  // EISDIR
        case 24: return "too many open files"  // EMFILE
        case 27: return "the file is too large"  // EFBIG
        case 28: return "the disk is full"  // ENOSPC
        case 30: return "the file system is read-only"  // EROFS
        case 36: return "the name is too long"  // ENAMETOOLONG
        case 40: return "too many symbolic links"  // ELOOP
        case 122: return "the disk quota is exceeded"  // EDQUOT
        default: return "system error \(code)"
        }
    }
}
