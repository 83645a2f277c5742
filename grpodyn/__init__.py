"""grpodyn: predictable GRPO training from a mean-field theory."""
