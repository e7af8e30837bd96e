from enum import StrEnum


class VerdictIn(StrEnum):
    PARTIAL = "partial"
    RIGHT = "right"
    WRONG = "wrong"

    def __str__(self) -> str:
        return str(self.value)
