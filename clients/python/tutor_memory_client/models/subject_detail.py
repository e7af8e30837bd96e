from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.file_out import FileOut


T = TypeVar("T", bound="SubjectDetail")


@_attrs_define
class SubjectDetail:
    """
    Attributes:
        key (str): `learner/subject`.
        learner (str):
        subject (str):
        title (str):
        episodes (int):
        files (list[FileOut]):
        language (None | str | Unset):
        timezone (None | str | Unset):
    """

    key: str
    learner: str
    subject: str
    title: str
    episodes: int
    files: list[FileOut]
    language: None | str | Unset = UNSET
    timezone: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        key = self.key

        learner = self.learner

        subject = self.subject

        title = self.title

        episodes = self.episodes

        files = []
        for files_item_data in self.files:
            files_item = files_item_data.to_dict()
            files.append(files_item)

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

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "key": key,
                "learner": learner,
                "subject": subject,
                "title": title,
                "episodes": episodes,
                "files": files,
            }
        )
        if language is not UNSET:
            field_dict["language"] = language
        if timezone is not UNSET:
            field_dict["timezone"] = timezone

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.file_out import FileOut

        d = dict(src_dict)
        key = d.pop("key")

        learner = d.pop("learner")

        subject = d.pop("subject")

        title = d.pop("title")

        episodes = d.pop("episodes")

        files = []
        _files = d.pop("files")
        for files_item_data in _files:
            files_item = FileOut.from_dict(files_item_data)

            files.append(files_item)

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

        subject_detail = cls(
            key=key,
            learner=learner,
            subject=subject,
            title=title,
            episodes=episodes,
            files=files,
            language=language,
            timezone=timezone,
        )

        subject_detail.additional_properties = d
        return subject_detail

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
