from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateSubject")


@_attrs_define
class CreateSubject:
    """A subject to create.

    Attributes:
        learner (str): Learner slug (lowercase letters, digits, `-`, `_`). Example: ana.
        subject (str): Subject slug. Example: cell-biology.
        at (None | str | Unset): When it was created (RFC 3339; default: now).
        language (None | str | Unset): BCP 47 language tag.
        timezone (None | str | Unset): The learner's IANA time zone (windows like "in July" are read in it).
        title (None | str | Unset):
    """

    learner: str
    subject: str
    at: None | str | Unset = UNSET
    language: None | str | Unset = UNSET
    timezone: None | str | Unset = UNSET
    title: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        learner = self.learner

        subject = self.subject

        at: None | str | Unset
        if isinstance(self.at, Unset):
            at = UNSET
        else:
            at = self.at

        language: None | str | Unset
        if isinstance(self.language, Unset):
            language = UNSET
        else:
            language = self.language

        timezone: None | str | Unset
        if isinstance(self.timezone, Unset):
            timezone = UNSET
        else:
            timezone = self.timezone

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "learner": learner,
                "subject": subject,
            }
        )
        if at is not UNSET:
            field_dict["at"] = at
        if language is not UNSET:
            field_dict["language"] = language
        if timezone is not UNSET:
            field_dict["timezone"] = timezone
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        learner = d.pop("learner")

        subject = d.pop("subject")

        def _parse_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        at = _parse_at(d.pop("at", UNSET))

        def _parse_language(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        language = _parse_language(d.pop("language", UNSET))

        def _parse_timezone(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        timezone = _parse_timezone(d.pop("timezone", UNSET))

        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))

        create_subject = cls(
            learner=learner,
            subject=subject,
            at=at,
            language=language,
            timezone=timezone,
            title=title,
        )

        return create_subject
