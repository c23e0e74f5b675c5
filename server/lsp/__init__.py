"""The language server core: lifecycle, document sync, configuration, the feature protocol."""
