# Client-chosen ids (user_id, session_id) in URLs: what the API accepts, and nothing that needs escaping.
# Not dots alone: "." and ".." are the path segments every HTTP client resolves away
# (/api/v1/users/./profile is /api/v1/users/profile), so such an id was stored and then no URL reached it.
CLIENT_ID = r"(?=\.*[A-Za-z0-9_:@\-])[A-Za-z0-9_.:@\-]{1,128}"
