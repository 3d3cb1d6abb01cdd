# Client-chosen ids (user_id, session_id) in URLs: what the API accepts, and nothing that needs escaping.
CLIENT_ID = r"[A-Za-z0-9_.:@\-]{1,128}"
