/* digits_data.h: the UCI handwritten digits for the C examples (train_digits,
 * train_digits_cnn): 1797 images of 8 x 8 pixels in data/digits.csv.gz (64 values 0..16
 * and the label per line), a fixed shuffle and the 1437 / 360 split. */
#ifndef DEVTENSOR_EXAMPLES_DIGITS_DATA_H
#define DEVTENSOR_EXAMPLES_DIGITS_DATA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define ROWS 1797
#define PIXELS 64
#define CLASSES 10
#define TRAIN 1437

/* Reads the 1797 rows: pixels scaled to [0, 1] and labels. */
static int load_digits(const char* path, float* pixels, int64_t* labels) {
  gzFile f = gzopen(path, "rb");
  char line[1024];
  int row = 0;
  if (!f) {
    fprintf(stderr, "digits: cannot open %s\n", path);
    return 1;
  }
  while (row < ROWS && gzgets(f, line, sizeof line)) {
    char* p = line;
    int col;
    for (col = 0; col <= PIXELS; ++col) {
      char* end;
      long v = strtol(p, &end, 10);
      if (end == p) break;
      if (col < PIXELS) pixels[row * PIXELS + col] = (float)v / 16.0f;
      else labels[row] = v;
      p = *end == ',' ? end + 1 : end;
    }
    if (col != PIXELS + 1) {
      fprintf(stderr, "digits: %s: row %d is malformed\n", path, row + 1);
      gzclose(f);
      return 1;
    }
    ++row;
  }
  gzclose(f);
  if (row != ROWS) {
    fprintf(stderr, "digits: %s: expected %d rows, got %d\n", path, ROWS, row);
    return 1;
  }
  return 0;
}

/* A permutation of 0..n-1 from a fixed LCG (the same on every machine). */
static void shuffle(int64_t* idx, int64_t n, uint64_t* state) {
  int64_t i;
  for (i = 0; i < n; ++i) idx[i] = i;
  for (i = n - 1; i > 0; --i) {
    int64_t j, t;
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    j = (int64_t)((*state >> 33) % (uint64_t)(i + 1));
    t = idx[i];
    idx[i] = idx[j];
    idx[j] = t;
  }
}

/* The rows in a shuffled order from *rng (the first TRAIN train, the rest test):
 * xs gets ROWS * PIXELS pixels, ys the labels. */
static int load_digits_shuffled(const char* path, uint64_t* rng, float* xs, int64_t* ys) {
  static float pixels[ROWS * PIXELS];
  static int64_t labels[ROWS];
  int64_t order[ROWS];
  int i;
  if (load_digits(path, pixels, labels)) return 1;
  shuffle(order, ROWS, rng);
  for (i = 0; i < ROWS; ++i) {
    memcpy(xs + i * PIXELS, pixels + order[i] * PIXELS, sizeof(float) * PIXELS);
    ys[i] = labels[order[i]];
  }
  return 0;
}

#endif /* DEVTENSOR_EXAMPLES_DIGITS_DATA_H */
