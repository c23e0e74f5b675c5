"""Text that must not carry what it should not: secrets redacted (redaction), model-written text escaped (model_text)."""
