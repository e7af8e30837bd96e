from enum import StrEnum


class CheckType(StrEnum):
    CHECK = "check"

    def __str__(self) -> str:
        return str(self.value)
