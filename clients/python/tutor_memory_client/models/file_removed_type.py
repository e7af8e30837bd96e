from enum import StrEnum


class FileRemovedType(StrEnum):
    FILE_REMOVED = "file_removed"

    def __str__(self) -> str:
        return str(self.value)
