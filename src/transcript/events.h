#pragma once
// Every transcript event: its name, its fields with their JSON types and
// whether each must be there, and what it means. The writer checks what it
// writes against this table, the reader what it reads, `show` renders each
// kind, and docs/transcript.md documents each (tests hold them to it).
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ratchet::transcript::events {

// The event names, in the order a run writes them.
inline constexpr char kRunStart[] = "run_start";
inline constexpr char kHostLibrary[] = "host_library";
inline constexpr char kBatchStart[] = "batch_start";
inline constexpr char kConnect[] = "connect";
inline constexpr char kUnreachable[] = "unreachable";
inline constexpr char kRebootWait[] = "reboot_wait";
inline constexpr char kReconnect[] = "reconnect";
inline constexpr char kStepStart[] = "step_start";
inline constexpr char kCommand[] = "command";
inline constexpr char kOutput[] = "output";
inline constexpr char kExit[] = "exit";
inline constexpr char kEvidence[] = "evidence";
inline constexpr char kFetch[] = "fetch";
inline constexpr char kStepEnd[] = "step_end";
inline constexpr char kLock[] = "lock";
inline constexpr char kHostEnd[] = "host_end";
inline constexpr char kAudit[] = "audit";
inline constexpr char kRunEnd[] = "run_end";

/// A field's JSON type. `integer` is a JSON number without a fraction.
enum class Type { string, integer, boolean, array, object };

enum class Presence {
  required,  ///< in every event of its kind
  optional,  ///< only where it applies (docs/transcript.md says when)
  schema1,   ///< written by schema 1 only: read, never written again
};

struct Field {
  std::string_view name;
  Type type;
  Presence presence;
};

struct Event {
  std::string_view name;
  std::string_view meaning;  ///< one line, for people
  std::span<const Field> fields;  ///< beyond common()'s, which every event may have
  /// Of these fields (space-separated), at least one is present ("" = no such rule).
  std::string_view one_of;
};

/// Every event kind, in the order a run writes them.
std::span<const Event> all();

/// The fields of every kind, written before its own: "event", "t", and the
/// hash chain's "prev" (every event of a run but its run_start; transcript/chain.h).
std::span<const Field> common();

/// The row of event `name`; nullptr for a name the table does not know.
const Event* find(std::string_view name);

/// "a string", "an integer", "true or false", "an array", "an object".
std::string_view type_words(Type t);

/// How strictly check_event() reads.
enum class Check {
  write,  ///< exactly the table: no unknown event or field, none missing, no schema 1 field
  read,   ///< what it knows: the types of the fields it knows, of the kinds it knows
};

/// "" when `fields` (a JSON object, with or without "event" and "t") fit event
/// `name`, else the first problem: "event `exit`: field `code` must be an
/// integer", "event `exit`: unknown field `foo`", "event `exit`: missing `host`".
std::string check_event(std::string_view name, const nlohmann::json& fields, Check mode = Check::write);

}  // namespace ratchet::transcript::events
