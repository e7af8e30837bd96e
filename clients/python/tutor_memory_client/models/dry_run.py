from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.block import Block
    from ..models.dry_run_messages_item import DryRunMessagesItem


T = TypeVar("T", bound="DryRun")


@_attrs_define
class DryRun:
    """A dry run: the prompt that would be sent, clearly marked.

    Attributes:
        block (Block): The block as docs/formats.md "Block as JSON" describes it: the one type the CLI,
            the HTTP API and the benchmark print.
        dry_run (bool): Always true: no model was called.
        learner_seq (int): The learner message's seq in the chain.
        messages (list[DryRunMessagesItem]): The chat messages that would be sent.
        passages (list[str]): Material passages that went into the prompt, as quoted there.
        prompt (str): The assembled prompt (system message).
    """

    block: Block
    dry_run: bool
    learner_seq: int
    messages: list[DryRunMessagesItem]
    passages: list[str]
    prompt: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        block = self.block.to_dict()

        dry_run = self.dry_run

        learner_seq = self.learner_seq

        messages = []
        for messages_item_data in self.messages:
            messages_item = messages_item_data.to_dict()
            messages.append(messages_item)

        passages = self.passages

        prompt = self.prompt

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "block": block,
                "dry_run": dry_run,
                "learner_seq": learner_seq,
                "messages": messages,
                "passages": passages,
                "prompt": prompt,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.block import Block
        from ..models.dry_run_messages_item import DryRunMessagesItem

        d = dict(src_dict)
        block = Block.from_dict(d.pop("block"))

        dry_run = d.pop("dry_run")

        learner_seq = d.pop("learner_seq")

        messages = []
        _messages = d.pop("messages")
        for messages_item_data in _messages:
            messages_item = DryRunMessagesItem.from_dict(messages_item_data)

            messages.append(messages_item)

        passages = cast(list[str], d.pop("passages"))

        prompt = d.pop("prompt")

        dry_run = cls(
            block=block,
            dry_run=dry_run,
            learner_seq=learner_seq,
            messages=messages,
            passages=passages,
            prompt=prompt,
        )

        dry_run.additional_properties = d
        return dry_run

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
