"""The terminal renderer: view-models (reports/viewmodels) → `Line`s (rich Text with styles) →
the console (`emit`: styled and wrapped in a TTY, plain and unwrapped otherwise)."""
