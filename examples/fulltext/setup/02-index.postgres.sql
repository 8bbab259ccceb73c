-- tsvector with the 'simple' configuration (no stemming, no stopwords: the same tokens as
-- InnoDB and FTS5) and a GIN index over it.
ALTER TABLE docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED;
CREATE INDEX docs_tsv_gin ON docs USING gin (tsv);
VACUUM ANALYZE docs;
