/* C interface of libt5xx_sentencepiece, the module that wraps Debian's
 * libsentencepiece.
 *
 * Why a module: libsentencepiece 0.1.97 (Debian 12) embeds its own
 * protobuf-lite 3.14 and exports its symbols, while libtorch links the
 * system libprotobuf 3.21. Loaded into one symbol namespace the two collide
 * (a crash in protobuf's static initialisers, or protobuf's version check
 * aborting). t5xx therefore never links libsentencepiece into a process:
 * the data library dlopen()s this module with RTLD_LOCAL | RTLD_DEEPBIND, so
 * SentencePiece binds to its bundled protobuf and nothing else sees it.
 *
 * Strings and id arrays returned through out-parameters are malloc()ed and
 * released with t5xx_spm_free_buffer. Functions return 0 on success and
 * non-zero on failure, with *error set to a malloc()ed message. */
#ifndef T5XX_DATA_SENTENCEPIECE_SHIM_API_H_
#define T5XX_DATA_SENTENCEPIECE_SHIM_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define T5XX_SPM_SHIM_ABI_VERSION 2

typedef struct t5xx_spm_model t5xx_spm_model;

int t5xx_spm_abi_version(void);
void t5xx_spm_free_buffer(void* p);

/* Loads a ModelProto from a file, or from serialized bytes. */
int t5xx_spm_load(const char* model_file, t5xx_spm_model** model, char** error);
int t5xx_spm_load_serialized(const char* bytes, size_t len, t5xx_spm_model** model,
                             char** error);
void t5xx_spm_free(t5xx_spm_model* model);
int t5xx_spm_piece_size(const t5xx_spm_model* model);
/* which: 0 = pad, 1 = eos, 2 = unk, 3 = bos; -1 when the model has none. */
int t5xx_spm_special_id(const t5xx_spm_model* model, int which);
float t5xx_spm_score(const t5xx_spm_model* model, int id);
int t5xx_spm_id_to_piece(const t5xx_spm_model* model, int id, char** piece,
                         size_t* piece_len);
int t5xx_spm_encode(const t5xx_spm_model* model, const char* text,
                    size_t text_len, int32_t** ids, size_t* num_ids,
                    char** error);
int t5xx_spm_decode(const t5xx_spm_model* model, const int32_t* ids,
                    size_t num_ids, char** text, size_t* text_len,
                    char** error);

/* SentencePieceTrainer::Train over in-memory sentences. args holds num_args
 * "key", "value" pairs (2*num_args strings) of trainer flags without "--".
 * seed seeds SentencePiece's random generator; quiet silences INFO logs.
 * The trained ModelProto is returned serialized in *model (not written to
 * a file), so its bytes do not depend on any path. */
int t5xx_spm_train(const char* const* args, size_t num_args,
                   const char* const* sentences, const size_t* sentence_lens,
                   size_t num_sentences, unsigned int seed, int quiet,
                   char** model, size_t* model_len, char** error);

#ifdef __cplusplus
}
#endif

#endif  /* T5XX_DATA_SENTENCEPIECE_SHIM_API_H_ */
