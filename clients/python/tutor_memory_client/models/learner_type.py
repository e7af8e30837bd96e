from enum import StrEnum


class LearnerType(StrEnum):
    LEARNER = "learner"

    def __str__(self) -> str:
        return str(self.value)
