// Placeholder: replaced by the StateStore implementation.
