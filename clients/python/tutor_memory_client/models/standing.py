from enum import StrEnum


class Standing(StrEnum):
    NO_EVIDENCE = "no_evidence"
    STILL_LEARNING = "still_learning"
    STRUGGLES = "struggles"
    UNDERSTANDS = "understands"

    def __str__(self) -> str:
        return str(self.value)
