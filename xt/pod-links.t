#!/usr/bin/perl
# Every link into this distribution lands: each L<Module/section> (and
# L</section>) in the installed POD names a document of the distribution
# and a heading or =item of it, as Pod::Checker reads a node (the plain
# text, or the first word of several). Links to other distributions are
# not checked. The checker is first shown a planted bad link, so a checker
# that finds nothing fails here instead of passing.
use strict;
use warnings;

use lib 't/lib';
use Test::More;
use CMRXTest::Peers qw(slurp);
use CMRXTest::Pod qw(pod_documents pod_outline link_problems);

my $documents = pod_documents();
my %outline;
my $outline_of = sub { my ($file) = @_; $outline{$file} ||= pod_outline(slurp($file)) };

# ---- the checker finds a bad link ------------------------------------------

{
    my $planted = pod_outline(<<'POD');
=head1 NAME

Planted - a document with links

=head1 SEE ALSO

L</NAME>, L<Cache::Memcached::RustXS::Zstd/DIAGNOSTICS>,
L<Cache::Memcached::RustXS::Zstd/NO SUCH HEADING>, L</Nor this>,
L<Cache::Memcached::RustXS::NoSuchModule>, L<Cache::Memcached::Fast/anything>.

=cut
POD
    my @found = link_problems('Planted', $planted, $documents, $outline_of);
    is scalar(@found), 3, 'a planted document: its 3 bad links of 6 are found'
        or diag join "\n", @found;
    like $found[0], qr{line 7: L<Cache::Memcached::RustXS::Zstd/NO SUCH HEADING>: .*no heading},
        '... each with its line and why';
}

# ---- the distribution's POD ------------------------------------------------

my $links = 0;
for my $name (sort keys %$documents) {
    my $outline = $outline_of->($documents->{$name});
    $links += grep { my $to = $_->{to}; $to eq '' || exists $documents->{$to} } @{ $outline->{links} };
    my @problems = link_problems($name, $outline, $documents, $outline_of);
    is scalar(@problems), 0, "$documents->{$name}: every link into the distribution lands"
        or diag join "\n", map { "  $documents->{$name} $_" } @problems;
}
cmp_ok $links, '>=', 100, "$links links into the distribution checked";

done_testing;
