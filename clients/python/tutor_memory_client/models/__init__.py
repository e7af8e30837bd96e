"""Contains all the data models used in inputs/outputs"""

from .belief_history_response_200_item import BeliefHistoryResponse200Item
from .belief_step import BeliefStep
from .belief_view import BeliefView
from .beliefs_out import BeliefsOut
from .beliefs_out_checks import BeliefsOutChecks
from .beliefs_out_current_item import BeliefsOutCurrentItem
from .block import Block
from .block_body import BlockBody
from .block_window import BlockWindow
from .check_event import CheckEvent
from .check_type import CheckType
from .checkpoint_out import CheckpointOut
from .cite_in import CiteIn
from .class_concept import ClassConcept
from .class_learner import ClassLearner
from .class_stale import ClassStale
from .class_view import ClassView
from .concept_view import ConceptView
from .create_subject import CreateSubject
from .dry_run import DryRun
from .dry_run_messages_item import DryRunMessagesItem
from .episodes_response_200_item import EpisodesResponse200Item
from .erase_episode_response_200 import EraseEpisodeResponse200
from .erase_learner_response_200 import EraseLearnerResponse200
from .erase_subject_response_200 import EraseSubjectResponse200
from .erase_tenant_response_200 import EraseTenantResponse200
from .error_body import ErrorBody
from .error_detail import ErrorDetail
from .file_event import FileEvent
from .file_out import FileOut
from .file_removed_event import FileRemovedEvent
from .file_removed_type import FileRemovedType
from .file_type import FileType
from .grounding_out import GroundingOut
from .grounding_out_traces_item import GroundingOutTracesItem
from .grounding_request import GroundingRequest
from .learner_event import LearnerEvent
from .learner_type import LearnerType
from .map_view import MapView
from .map_view_map import MapViewMap
from .nightly_request import NightlyRequest
from .nightly_response_200 import NightlyResponse200
from .quiz_event import QuizEvent
from .quiz_type import QuizType
from .recalled_ref import RecalledRef
from .recorded import Recorded
from .recorded_episode import RecordedEpisode
from .report_view import ReportView
from .report_view_chain import ReportViewChain
from .report_view_report import ReportViewReport
from .standing import Standing
from .subject_detail import SubjectDetail
from .subject_list import SubjectList
from .subject_out import SubjectOut
from .taught import Taught
from .teach_request import TeachRequest
from .turn_request import TurnRequest
from .tutor_event import TutorEvent
from .tutor_type import TutorType
from .upload_form import UploadForm
from .verdict_in import VerdictIn
from .verify_response_200 import VerifyResponse200

__all__ = (
    "BeliefHistoryResponse200Item",
    "BeliefStep",
    "BeliefView",
    "BeliefsOut",
    "BeliefsOutChecks",
    "BeliefsOutCurrentItem",
    "Block",
    "BlockBody",
    "BlockWindow",
    "CheckEvent",
    "CheckType",
    "CheckpointOut",
    "CiteIn",
    "ClassConcept",
    "ClassLearner",
    "ClassStale",
    "ClassView",
    "ConceptView",
    "CreateSubject",
    "DryRun",
    "DryRunMessagesItem",
    "EpisodesResponse200Item",
    "EraseEpisodeResponse200",
    "EraseLearnerResponse200",
    "EraseSubjectResponse200",
    "EraseTenantResponse200",
    "ErrorBody",
    "ErrorDetail",
    "FileEvent",
    "FileOut",
    "FileRemovedEvent",
    "FileRemovedType",
    "FileType",
    "GroundingOut",
    "GroundingOutTracesItem",
    "GroundingRequest",
    "LearnerEvent",
    "LearnerType",
    "MapView",
    "MapViewMap",
    "NightlyRequest",
    "NightlyResponse200",
    "QuizEvent",
    "QuizType",
    "RecalledRef",
    "Recorded",
    "RecordedEpisode",
    "ReportView",
    "ReportViewChain",
    "ReportViewReport",
    "Standing",
    "SubjectDetail",
    "SubjectList",
    "SubjectOut",
    "Taught",
    "TeachRequest",
    "TurnRequest",
    "TutorEvent",
    "TutorType",
    "UploadForm",
    "VerdictIn",
    "VerifyResponse200",
)
