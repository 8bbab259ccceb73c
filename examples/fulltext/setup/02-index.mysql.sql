-- InnoDB FULLTEXT, built over the loaded rows (the index build is this file's time).
ALTER TABLE docs ADD FULLTEXT INDEX docs_body_ft (body);
