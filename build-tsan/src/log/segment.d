build-tsan/src/log/segment.o: src/log/segment.c src/log/log_int.h \
 src/log/batch.h src/util/buf.h src/util/err.h src/log/log.h \
 src/util/log.h
src/log/log_int.h:
src/log/batch.h:
src/util/buf.h:
src/util/err.h:
src/log/log.h:
src/util/log.h:
