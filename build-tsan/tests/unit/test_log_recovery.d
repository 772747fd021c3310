build-tsan/tests/unit/test_log_recovery.o: tests/unit/test_log_recovery.c \
 src/log/batch.h src/util/buf.h src/util/err.h src/log/log.h \
 src/log/log_int.h tests/test.h
src/log/batch.h:
src/util/buf.h:
src/util/err.h:
src/log/log.h:
src/log/log_int.h:
tests/test.h:
