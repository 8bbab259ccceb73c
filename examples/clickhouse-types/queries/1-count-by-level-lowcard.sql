SELECT level, count() AS n FROM logs_lowcard GROUP BY level ORDER BY level
