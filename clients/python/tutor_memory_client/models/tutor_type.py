from enum import StrEnum


class TutorType(StrEnum):
    TUTOR = "tutor"

    def __str__(self) -> str:
        return str(self.value)
