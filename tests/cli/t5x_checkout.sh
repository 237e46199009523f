# Sourced by the CLI tests that read t5x's own gin files: sets $t5x to a t5x
# checkout -- $T5X_DIR, else ../shared/t5x beside this checkout, else
# ~/.cache/t5xx/t5x (scripts/setup.sh --test fetches it there) -- or prints
# SKIP with the reason and exits 77. Needs $root (this checkout).
has_t5x() { [ -f "$1/t5x/configs/runs/finetune.gin" ] && [ -f "$1/t5x/examples/t5/t5_1_1/small.gin" ]; }
t5x=""
for d in "${T5X_DIR:-}" "$root/../shared/t5x" "$HOME/.cache/t5xx/t5x"; do
  if [ -n "$d" ] && has_t5x "$d"; then t5x="$(cd "$d" && pwd)"; break; fi
done
if [ -z "$t5x" ]; then
  echo "SKIP: no t5x checkout (T5X_DIR unset or not a checkout; none at ../shared/t5x or"
  echo "      ~/.cache/t5xx/t5x): set T5X_DIR=<checkout of github.com/google-research/t5x>,"
  echo "      or let scripts/setup.sh --test fetch one (scripts/fetch_t5x.sh)"
  exit 77
fi
