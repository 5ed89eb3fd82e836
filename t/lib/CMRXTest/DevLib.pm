package CMRXTest::DevLib;

# Test helper: puts dev/lib -- the helpers the tests share with the
# benchmark (CMRXDev::Memcached, ::ChildProcess, ::Corpus) -- into @INC,
# found from this file's place, so `use lib 't/lib'` is all a test needs.
# See the POD at the end of the file.

use strict;
use warnings;

use File::Basename ();
use File::Spec ();

our $VERSION = '0.01';

# t/lib/CMRXTest/DevLib.pm -> dev/lib, as an absolute path (a test may chdir).
our $DIR = File::Spec->catdir(
    File::Spec->rel2abs(File::Basename::dirname(__FILE__)), (File::Spec->updir) x 3, 'dev', 'lib');

sub import {
    unshift @INC, $DIR unless grep { !ref && $_ eq $DIR } @INC;
    return;
}

1;

__END__

=head1 NAME

CMRXTest::DevLib - the shared helpers of dev/lib in @INC

=head1 SYNOPSIS

    use lib 't/lib';
    use CMRXTest::DevLib;
    use CMRXDev::Corpus qw(corpus_values);

=head1 DESCRIPTION

F<dev/lib> holds the helpers the tests and the benchmark both use: the
memcached servers (L<CMRXDev::Memcached>, with L<CMRXDev::ChildProcess>)
and the corpus of real values (L<CMRXDev::Corpus>). Neither side loads
the other's helpers (F<t/lib>, F<bench/lib>); both load these. C<use
CMRXTest::DevLib> puts F<dev/lib> at the front of C<@INC> (once), found
from this file's own place, so it works from any directory. The helpers in
F<t/lib> built on F<dev/lib> (L<CMRXTest::Memcached>,
L<CMRXTest::FakeServer>, ...) use it themselves.

=cut
