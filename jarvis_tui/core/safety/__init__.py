"""Text made safe to show and share: terminal escapes taken out, credentials and the secrets
the app was given hidden."""
