#include "errors.h"

namespace napkin::core {

std::string describe(const UserError& e)
{
    std::string s = e.field.empty() ? std::string("scenario") : e.field;
    if (!e.value.empty())
        s += " = " + e.value;
    s += ": " + e.why;
    if (!e.allowed.empty())
        s += " (allowed: " + e.allowed + ")";
    return s;
}

} // namespace napkin::core
