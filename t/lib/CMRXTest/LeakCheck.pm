package CMRXTest::LeakCheck;

# Test helper: the leak tests' check -- no Perl SV left behind by code run
# again and again, counted by Test::LeakTrace -- for every test that
# asserts it. See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use Test::More ();

use CMRXTest::Clients qw(why_missing);

our $VERSION   = '0.01';
our @EXPORT_OK = qw(no_leaks leaked_svs leaktrace_missing);

my $WARM_RUNS   = 2;    # before counting: caches filled, once-only warnings given
my $TRACED_RUNS = 3;    # counted: an SV leaked per run shows three times over

my $leaktrace_missing;

# '' when Test::LeakTrace loads, else why not (the reason to skip with).
sub leaktrace_missing {
    return $leaktrace_missing //= why_missing('Test::LeakTrace', 'Test::LeakTrace is not installed');
}

# The SVs that $code leaves behind over $TRACED_RUNS runs, after
# $WARM_RUNS: how many more there are than before, or 0 when there are
# fewer (what a warm-up run left, freed), as Test::LeakTrace's no_leaks_ok
# counts. Needs Test::LeakTrace (ask leaktrace_missing first).
sub leaked_svs {
    my ($code) = @_;
    die 'leaked_svs: ' . leaktrace_missing() . "\n" if leaktrace_missing();
    $code->() for 1 .. $WARM_RUNS;
    my $more = Test::LeakTrace::leaked_count(sub { $code->() for 1 .. $TRACED_RUNS });
    return $more > 0 ? $more : 0;
}

# One test, $name: $code leaks no SV (leaked_svs is 0). Skipped, with the
# reason, without Test::LeakTrace. On a leak, what leaked is shown.
sub no_leaks {
    my ($name, $code) = @_;
  SKIP: {
        Test::More::skip(leaktrace_missing(), 1) if leaktrace_missing();
        my $leaked = leaked_svs($code);
        local $Test::Builder::Level = $Test::Builder::Level + 1;
        Test::More::is($leaked, 0, $name)
            or Test::LeakTrace::leaktrace(sub { $code->() }, -verbose);
    }
    return;
}

1;

__END__

=head1 NAME

CMRXTest::LeakCheck - no SV leaked: the leak tests' check

=head1 SYNOPSIS

    use CMRXTest::LeakCheck qw(no_leaks leaked_svs leaktrace_missing);

    no_leaks('parse a response: no SV leaked', sub { $parser_run->() });

    SKIP: {    # a check made elsewhere (in a child process, ...)
        skip leaktrace_missing(), 1 if leaktrace_missing();
        is leaked_svs($code), 0, 'nothing leaks';
    }

=head1 FUNCTIONS

=over 4

=item C<no_leaks($name, $code)>

One test named C<$name>: C<$code> leaks no Perl SV. It runs C<$code> twice
(caches filled, a warning given once is given), then counts with
L<Test::LeakTrace> the SVs that three more runs leave behind: the test
passes when there are none, and shows what leaked when there are. Without
Test::LeakTrace the test is skipped with the reason. Every test that
asserts "no SV leaked" uses it (F<t/08-helper-homes.t> checks that no other
file calls Test::LeakTrace).

=item C<leaked_svs($code)>

That count itself, for a check made where a test cannot be (in a child
process): the SVs there are after the three runs beyond those there were
before, or 0 when there are fewer (a warm-up run left something that a
later run freed), as Test::LeakTrace's C<no_leaks_ok> counts. Dies without
Test::LeakTrace.

=item C<leaktrace_missing()>

The empty string when Test::LeakTrace loads, else the reason to skip
with, for a block of such checks.

=back

=cut
