from enum import StrEnum


class FileType(StrEnum):
    FILE = "file"

    def __str__(self) -> str:
        return str(self.value)
