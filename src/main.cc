#include "cli/app.h"

int main(int argc, char** argv) { return ratchet::cli::main(argc, argv); }
