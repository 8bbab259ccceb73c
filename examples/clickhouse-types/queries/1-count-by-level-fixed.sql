SELECT level, count() AS n FROM logs_fixed GROUP BY level ORDER BY level
