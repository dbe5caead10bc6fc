// napkin: the desktop app. Parses arguments and hands over to napkin_app.
#include "app.h"

int main(int argc, char** argv)
{
    return napkin::app::runApp(argc, argv);
}
