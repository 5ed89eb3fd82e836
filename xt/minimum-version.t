#!/usr/bin/perl
# Nothing in the Perl code needs a perl newer than the one the distribution
# supports (Makefile.PL's MIN_PERL_VERSION), by Perl::MinimumVersion's reading
# of syntax and core modules: the modules, Makefile.PL, the tests and their
# helpers, the benchmark, the command and the scripts.
use strict;
use warnings;

use File::Find ();
use Test::More;

my $FLOOR = '5.010001';
eval { require Perl::MinimumVersion; 1 }
    or plan skip_all => 'Perl::MinimumVersion is not installed';

my @files = ('Makefile.PL');
File::Find::find({ no_chdir => 1, wanted => sub {
    return unless -f $_;
    return if m{/(?:data|seeds)/};
    push @files, $_ if /\.(?:pm|pl|t|PL)\z/ || (m{^(?:bin|script)/} && perl_script($_));
} }, grep { -d } qw(lib bin t xt bench script));
ok @files > 20, scalar(@files) . ' Perl files found';

for my $file (sort @files) {
    my $pmv = Perl::MinimumVersion->new($file);
    if (!$pmv) {
        fail "$file: Perl::MinimumVersion could not parse it";
        next;
    }
    # The larger of the explicit `use VERSION` and what the syntax needs.
    my $needs = $pmv->minimum_syntax_version;
    my $reason = $pmv->minimum_syntax_reason;
    ok !$needs || $needs <= version->parse($FLOOR),
        "$file needs at most perl $FLOOR"
        or diag "needs $needs: " . ($reason ? $reason->rule . ' at line ' . $reason->element->line_number : '?');
}

done_testing;

sub perl_script {
    my ($file) = @_;
    open my $fh, '<', $file or return 0;
    my $first = <$fh> // '';
    return $first =~ /^#!.*\bperl\b/;
}
