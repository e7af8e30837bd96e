from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="NightlyRequest")


@_attrs_define
class NightlyRequest:
    """
    Attributes:
        at (None | str | Unset): The night's end (RFC 3339; default: now).
        batch (int | None | Unset): Citations verified per subject per night.
        since (None | str | Unset): Catch up every night from this day (YYYY-MM-DD).
    """

    at: None | str | Unset = UNSET
    batch: int | None | Unset = UNSET
    since: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        at: None | str | Unset
        if isinstance(self.at, Unset):
            at = UNSET
        else:
            at = self.at

        batch: int | None | Unset
        if isinstance(self.batch, Unset):
            batch = UNSET
        else:
            batch = self.batch

        since: None | str | Unset
        if isinstance(self.since, Unset):
            since = UNSET
        else:
            since = self.since

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if at is not UNSET:
            field_dict["at"] = at
        if batch is not UNSET:
            field_dict["batch"] = batch
        if since is not UNSET:
            field_dict["since"] = since

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        at = _parse_at(d.pop("at", UNSET))

        def _parse_batch(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        batch = _parse_batch(d.pop("batch", UNSET))

        def _parse_since(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        since = _parse_since(d.pop("since", UNSET))

        nightly_request = cls(
            at=at,
            batch=batch,
            since=since,
        )

        return nightly_request
