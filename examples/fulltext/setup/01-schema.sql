-- The corpus table; the loader fills it with `docs` documents.
DROP TABLE IF EXISTS docs;
CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
