build-tsan/src/log/log.o: src/log/log.c src/log/log_int.h src/log/batch.h \
 src/util/buf.h src/util/err.h src/log/log.h src/util/clock.h \
 src/util/log.h src/util/parse.h
src/log/log_int.h:
src/log/batch.h:
src/util/buf.h:
src/util/err.h:
src/log/log.h:
src/util/clock.h:
src/util/log.h:
src/util/parse.h:
