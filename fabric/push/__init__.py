"""Push: render the intent, diff it against facts, back up, apply, verify, roll back."""
