"""Deterministic validators. Each returns data (`ValidationResult`); only `runner` decides consequences."""

from tier2.validators.base import Finding, ValidationResult
from tier2.validators.report import ValidationReport
from tier2.validators.runner import ValidationRunner

__all__ = ["Finding", "ValidationReport", "ValidationResult", "ValidationRunner"]
