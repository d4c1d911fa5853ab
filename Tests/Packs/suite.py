"""The pass/fail tally the pack test scripts print (`ok NAME` / `FAIL NAME detail`)."""


class Suite:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, condition, detail=""):
        if condition:
            self.passed += 1
            print(f"ok   {name}")
        else:
            self.failed += 1
            print(f"FAIL {name} {detail}")
