#!/bin/bash
# Peer "ansible-playbook" (Debian's ansible-core): a play of STEPS command tasks on HOSTS hosts,
# pipelining on, forks = HOSTS, gather_facts false, strategy linear, python3 given (no
# interpreter discovery); ssh connection plugin with ansible's default ssh_args
# (-C -o ControlMaster=auto -o ControlPersist=60s) plus -F the bench's ssh_config.
# Between timed runs, ansible-cleanup.sh closes the ControlPersist masters ansible leaves
# behind, so every run starts cold.
#   ansible.sh HOSTS STEPS MODE         [KEX=curve25519-sha256 for that key exchange]
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
H=$1 N=$2 MODE=$3
A=$BENCH_TMP/ansible; mkdir -p "$A/cp" "$A/local" "$A/home"
INV=$A/inv-$H.ini
[ -f "$INV" ] || { echo "[bench]"; for ((j = 1; j <= H; j++)); do echo "h$j"; done; } > "$INV"
PB=$A/pb-$MODE-$N.yml
if [ ! -f "$PB" ]; then
  {
    printf -- '- hosts: bench\n  gather_facts: false\n  tasks:\n'
    for ((i = 1; i <= N; i++)); do
      set_step_cmd "$MODE" "$i"
      printf '    - name: step %d\n      ansible.builtin.command: "%s"\n' "$i" "$STEP_CMD"
      [ "$MODE" = true ] || printf '      register: out%d\n      failed_when: out%d.stdout != "%d"\n' "$i" "$i" "$i"
    done
  } > "$PB.tmp" && mv "$PB.tmp" "$PB"
fi
export ANSIBLE_CONFIG=$BENCH_DIR/peers/ansible.cfg
export ANSIBLE_HOME=$A/home ANSIBLE_LOCAL_TEMP=$A/local
export ANSIBLE_SSH_CONTROL_PATH_DIR=$A/cp
export ANSIBLE_SSH_COMMON_ARGS="-F $SSH_CFG${KEX:+ -o KexAlgorithms=$KEX}"
export ANSIBLE_FORKS=$H ANSIBLE_PIPELINING=True ANSIBLE_STRATEGY=linear ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3
exec ansible-playbook -i "$INV" "$PB"
