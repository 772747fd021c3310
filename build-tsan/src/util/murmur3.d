build-tsan/src/util/murmur3.o: src/util/murmur3.c src/util/murmur3.h
src/util/murmur3.h:
