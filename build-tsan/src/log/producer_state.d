build-tsan/src/log/producer_state.o: src/log/producer_state.c \
 src/log/log_int.h src/log/batch.h src/util/buf.h src/util/err.h \
 src/log/log.h src/util/crc32c.h
src/log/log_int.h:
src/log/batch.h:
src/util/buf.h:
src/util/err.h:
src/log/log.h:
src/util/crc32c.h:
