"""The session's events: the vocabulary (what a session reports and the closed sets it
reports them with), the stream that stamps, redacts and delivers them, and their wording."""
