/*
 * fuzz_device_parse.c — libFuzzer target for dt_device_parse and dt_device_format.
 *
 * The first byte picks a mode; the rest is the input.
 *   even: the rest is a string (NUL-terminated copy). dt_device_parse either fails
 *         cleanly (nonzero status, non-empty message, *out untouched) or gives a device
 *         that formats to "cpu:N" / "cuda:N", which parses back to the same device and
 *         formats to the same string again (round trip, canonical form).
 *   odd:  the rest is a dt_device {type, index} and a buffer capacity. dt_device_format
 *         follows the string protocol of the header: *needed is the full size, at most
 *         cap bytes are written (the buffer is exactly cap bytes, so ASan sees any byte
 *         past it), the text is NUL-terminated and a prefix of the full text; a device
 *         dt_device_parse accepts formats, and an invalid one fails cleanly.
 * Any violated property aborts with a message naming it (a crash for libFuzzer).
 */
#include <devtensor.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_NAME "fuzz_device_parse"
#include "fuzz_require.h"

/* A failed call: a documented nonzero status and a message. */
static void require_clean_failure(dt_status st, const char* what) {
  const char* msg = dt_last_error_message();
  REQUIRE(st > DT_OK && st <= DT_ERR_INTERNAL && st != DT_ERR_INTERNAL, "%s: status %d", what,
          (int)st);
  REQUIRE(msg != NULL && msg[0] != '\0', "%s: status %d with an empty message", what, (int)st);
}

static int same_device(dt_device a, dt_device b) { return a.type == b.type && a.index == b.index; }

/* Formats d into a fresh string (via the size query); NULL if formatting fails. */
static char* format_alloc(dt_device d, dt_status* st) {
  size_t needed = 0;
  char* buf;
  *st = dt_device_format(d, NULL, 0, &needed);
  if (*st != DT_OK) return NULL;
  REQUIRE(needed >= 2, "format size query gave needed = %zu", needed);
  buf = (char*)malloc(needed);
  REQUIRE(buf != NULL, "malloc(%zu)", needed);
  *st = dt_device_format(d, buf, needed, NULL);
  REQUIRE(*st == DT_OK, "format failed after its size query succeeded (status %d)", (int)*st);
  REQUIRE(strlen(buf) + 1 == needed, "formatted \"%s\" but needed = %zu", buf, needed);
  return buf;
}

/* digits is the decimal form of index: only digits, no sign, no leading zero. */
static int canonical_index(const char* digits, int32_t index) {
  long long value = 0;
  const char* p;
  if (digits[0] == '\0' || (digits[0] == '0' && digits[1] != '\0')) return 0;
  for (p = digits; *p; ++p) {
    if (*p < '0' || *p > '9' || p - digits > 10) return 0;
    value = value * 10 + (*p - '0');
  }
  return value == index;
}

static void check_parse(const char* text) {
  const dt_device sentinel = {-77, -77};
  dt_device d = sentinel, d2 = sentinel;
  dt_status st = dt_device_parse(text, &d);
  char *s, *s2;
  if (st != DT_OK) {
    require_clean_failure(st, "dt_device_parse");
    REQUIRE(same_device(d, sentinel), "failed parse of \"%s\" wrote *out", text);
    return;
  }
  REQUIRE(d.type == DT_DEVICE_CPU || d.type == DT_DEVICE_CUDA, "\"%s\" parsed to type %d", text,
          (int)d.type);
  REQUIRE(d.index >= 0, "\"%s\" parsed to index %d", text, (int)d.index);
  s = format_alloc(d, &st);
  REQUIRE(s != NULL, "device {%d,%d} parsed from \"%s\" does not format (status %d)",
          (int)d.type, (int)d.index, text, (int)st);
  /* The canonical form: "<type>:<decimal index, no sign, no leading zeros>". */
  REQUIRE((d.type == DT_DEVICE_CPU && strncmp(s, "cpu:", 4) == 0) ||
              (d.type == DT_DEVICE_CUDA && strncmp(s, "cuda:", 5) == 0),
          "\"%s\" -> {%d,%d} formats as \"%s\"", text, (int)d.type, (int)d.index, s);
  REQUIRE(canonical_index(strchr(s, ':') + 1, d.index), "\"%s\" -> {%d,%d} formats as \"%s\"",
          text, (int)d.type, (int)d.index, s);
  st = dt_device_parse(s, &d2);
  REQUIRE(st == DT_OK, "\"%s\" (formatted from \"%s\") does not parse (status %d)", s, text,
          (int)st);
  REQUIRE(same_device(d, d2), "\"%s\" -> {%d,%d} -> \"%s\" -> {%d,%d}", text, (int)d.type,
          (int)d.index, s, (int)d2.type, (int)d2.index);
  s2 = format_alloc(d2, &st);
  REQUIRE(s2 != NULL && strcmp(s, s2) == 0, "\"%s\" formats as \"%s\" then \"%s\"", text, s,
          s2 ? s2 : "(failed)");
  free(s2);
  free(s);
}

static void check_format(const uint8_t* data, size_t size) {
  dt_device d;
  uint8_t capb = 0;
  size_t cap, needed = (size_t)-1, full_needed = 0;
  char* buf;
  char* full;
  dt_status st, st_full;
  int32_t v[2] = {0, 0};
  memcpy(v, data, size < sizeof v ? size : sizeof v);
  if (size > sizeof v) capb = data[sizeof v];
  d.type = v[0];
  d.index = v[1];
  cap = capb % 24;
  /* The whole text, for reference. */
  full = format_alloc(d, &st_full);
  if (st_full != DT_OK) {
    require_clean_failure(st_full, "dt_device_format (size query)");
    REQUIRE(!((d.type == DT_DEVICE_CPU || d.type == DT_DEVICE_CUDA) && d.index >= 0),
            "valid device {%d,%d} does not format", (int)d.type, (int)d.index);
  } else {
    REQUIRE((d.type == DT_DEVICE_CPU || d.type == DT_DEVICE_CUDA) && d.index >= 0,
            "invalid device {%d,%d} formats as \"%s\"", (int)d.type, (int)d.index, full);
    full_needed = strlen(full) + 1;
  }
  /* Exactly cap bytes, so that ASan reports a write past the end. */
  buf = (char*)malloc(cap ? cap : 1);
  REQUIRE(buf != NULL, "malloc");
  memset(buf, 'Z', cap ? cap : 1);
  st = dt_device_format(d, cap ? buf : NULL, cap, &needed);
  if (st_full != DT_OK) {
    REQUIRE(st != DT_OK, "device {%d,%d}: cap %zu succeeds, cap 0 fails", (int)d.type,
            (int)d.index, cap);
    require_clean_failure(st, "dt_device_format");
  } else {
    REQUIRE(st == DT_OK, "dt_device_format cap %zu failed (status %d)", cap, (int)st);
    REQUIRE(needed == full_needed, "cap %zu: needed %zu, expected %zu", cap, needed, full_needed);
    if (cap > 0) {
      size_t n = strnlen(buf, cap);
      REQUIRE(n < cap, "cap %zu: no NUL within the buffer", cap);
      REQUIRE(n == (cap < full_needed ? cap - 1 : full_needed - 1),
              "cap %zu: wrote %zu characters of \"%s\"", cap, n, full);
      REQUIRE(strncmp(buf, full, n) == 0, "cap %zu: \"%s\" is not a prefix of \"%s\"", cap, buf,
              full);
    }
  }
  free(buf);
  free(full);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char* text;
  if (size == 0) return 0;
  if (data[0] & 1) {
    check_format(data + 1, size - 1);
    return 0;
  }
  text = (char*)malloc(size); /* size - 1 bytes of input + NUL */
  if (text == NULL) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  check_parse(text);
  free(text);
  return 0;
}
