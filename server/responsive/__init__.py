"""The language server stays responsive under load (issue 21, item 7): what a waiting request needs runs first."""
