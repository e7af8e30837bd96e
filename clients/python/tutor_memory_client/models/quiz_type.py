from enum import StrEnum


class QuizType(StrEnum):
    QUIZ = "quiz"

    def __str__(self) -> str:
        return str(self.value)
