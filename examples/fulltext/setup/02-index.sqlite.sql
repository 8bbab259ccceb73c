-- FTS5 over the docs table (external content), built from the loaded rows.
CREATE VIRTUAL TABLE docs_fts USING fts5(body, content='docs', content_rowid='id');
INSERT INTO docs_fts(docs_fts) VALUES ('rebuild');
ANALYZE;
