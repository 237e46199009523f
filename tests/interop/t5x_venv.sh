# Sourced by the t5x interop drivers: finds the venv scripts/setup_t5x_interop.sh
# made (${T5XX_T5X_VENV:-~/.cache/t5xx/t5x-venv}) and the t5x checkout its
# marker names ($T5X_DIR wins); sets $venv and exports T5X_DIR. Exits 77
# (ctest's skip) with the reason when they are not installed.
venv="${T5XX_T5X_VENV:-$HOME/.cache/t5xx/t5x-venv}"
marker="$venv/t5x-interop-ok"
if [ ! -f "$marker" ] || [ ! -x "$venv/bin/python3" ]; then
  echo "SKIP: t5x's Python packages are not installed ($marker missing)."
  echo "      scripts/setup.sh --test installs them into $venv when a t5x checkout"
  echo "      can be had: T5X_DIR=<checkout of github.com/google-research/t5x> or network access."
  exit 77
fi
export T5X_DIR="${T5X_DIR:-$(cut -d' ' -f1 "$marker")}"
