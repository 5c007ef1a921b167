"""The round loop and its collaborators; the only part of core that emits events."""
