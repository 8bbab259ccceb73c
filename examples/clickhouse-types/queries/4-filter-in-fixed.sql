SELECT count() FROM logs_fixed WHERE service IN ('api', 'auth', 'search')
