/* rnn_shim.h: the cgo helpers of the recurrent layers (rnn.go), with the same rule as
 * shim.h: one devtensor call per helper (gdt_rnn_forward reads the module's kind first,
 * as gdt_module_kind reads its size first), its error message fetched in the same cgo
 * call; each can allocate, so each takes the release slot first (gdt_take_slot). Handles
 * cross into Go as uintptr_t (C memory; no cgo pointer check); 0 is NULL (an absent h0
 * or c0). */
#ifndef DEVTENSOR_GO_RNN_SHIM_H
#define DEVTENSOR_GO_RNN_SHIM_H
#include <string.h>

#include "nn_shim.h" /* gdt_hres, gdt_hr */

/* cell: GDT_RNN_LSTM or GDT_RNN_GRU */
enum { GDT_RNN_LSTM, GDT_RNN_GRU };
static inline gdt_hres gdt_lstm_gru_new(int cell, int64_t input_size, int64_t hidden_size, int64_t num_layers,
                                        int32_t bias, int32_t batch_first, double dropout, int32_t bidirectional,
                                        dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = cell == GDT_RNN_LSTM ? dt_lstm_new(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                                                    bidirectional, dt, d, &m)
                                      : dt_gru_new(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                                                   bidirectional, dt, d, &m);
  return gdt_hr(st, m); }

/* nonlinearity: a C string the caller frees after the call ("tanh" or "relu"; the
 * library refuses any other name, with a message naming it). */
static inline gdt_hres gdt_rnn_new(int64_t input_size, int64_t hidden_size, int64_t num_layers,
                                   const char* nonlinearity, int32_t bias, int32_t batch_first, double dropout,
                                   int32_t bidirectional, dt_dtype dt, dt_device d) {
  gdt_take_slot();
  dt_module* m = NULL;
  dt_status st = dt_rnn_new(input_size, hidden_size, num_layers, nonlinearity, bias, batch_first, dropout,
                            bidirectional, dt, d, &m);
  return gdt_hr(st, m); }

/* The output, h_n and c_n (0 when not an LSTM) as gdt_t3res's three references.
 * h0 and c0: 0 for NULL (zeros). c_n is asked for only when m is an LSTM (the library
 * refuses c_n for a GRU or RNN); the kind is read into a buffer that fits "LSTM" and no
 * longer name, and a failed read (a bad handle) leaves c_n out: dt_rnn_forward then
 * reports the error itself. */
static inline gdt_t3res gdt_rnn_forward(uintptr_t m, uintptr_t input, uintptr_t h0, uintptr_t c0) {
  gdt_take_slot();
  char kind[8];
  size_t need = 0;
  int lstm = dt_module_kind((const dt_module*)m, kind, sizeof kind, &need) == DT_OK && need == sizeof "LSTM" &&
             strcmp(kind, "LSTM") == 0;
  dt_tensor* o = NULL;
  dt_tensor* h = NULL;
  dt_tensor* c = NULL;
  dt_status st = dt_rnn_forward((dt_module*)m, (const dt_tensor*)input, (const dt_tensor*)h0, (const dt_tensor*)c0,
                                &o, &h, lstm ? &c : NULL);
  return gdt_t3(st, o, h, c);
}

#endif
